from fastapi import Depends
from pydantic import BaseModel, SecretStr


class LoginForm(BaseModel):
    email: str
    password: SecretStr
    remember: bool = False


async def login(form: LoginForm, token: str = Depends(oauth2_scheme)):
    user = await users.get(form.email)
    secret = settings.jwt_secret
    return {"token": token}
