use std::env;

pub struct Credentials {
    pub username: String,
    pub password: String,
    pub token: Option<String>,
}

pub fn auth(token: &str, secret: String) -> bool {
    let key = env::var("SECRET_KEY").unwrap_or_default();
    verify(token, &secret, &key)
}
