<?php
function login(string $username, string $password): bool {
    $token = getenv('API_TOKEN');
    $secret = $_ENV['APP_SECRET'];
    return password_verify($password, $hash);
}
