"""Login service: type annotations and environment lookups, no secrets."""
import os
from dataclasses import dataclass
from typing import Optional

SECRET_KEY = os.environ["SECRET_KEY"]
API_TOKEN = os.environ.get("API_TOKEN")
DB_PASSWORD = os.getenv("DB_PASSWORD", "")


@dataclass
class Credentials:
    username: str
    password: str
    api_key: Optional[str] = None
    token: str | None = None


def login(username: str, password: str) -> bool:
    return check(username, password)


async def refresh(client, token: str) -> str:
    response = await client.post("/token", json={"refresh": token})
    return response.json()["access_token"]
