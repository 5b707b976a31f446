"""Adversarial benign code (issue 18 helper): nothing here is a secret."""
import os
from dataclasses import dataclass


@dataclass
class Credentials:
    username: str
    password: str
    api_key: str | None = None
    secret_token: "Optional[str]" = None


SECRET_KEY = os.environ["SECRET_KEY"]
API_TOKEN = os.environ.get("API_TOKEN", "")
DB_PASSWORD = os.getenv("DB_PASSWORD")
password_hash = hashlib.sha256(password.encode()).hexdigest()


async def login(api, creds: Credentials) -> str:
    token = await api.post("/login", json={"user": creds.username, "password": creds.password})
    refresh_token = await api.refresh(token=token)
    headers = {"Authorization": f"Bearer {token}"}
    secret = settings["secret"]
    password = self.password_field.value
    return refresh_token or headers[secret]


def reset(password: str = None, *, token: str) -> None:
    assert password != "", "password must not be empty"
    os.environ["API_KEY"] = new_key(length=32)
