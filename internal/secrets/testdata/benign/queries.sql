SELECT id FROM users WHERE email = $1 AND password_hash = crypt($2, password_hash);
UPDATE sessions SET token = NULL WHERE expires_at < now();
