package com.example;

public class User {
    private String password;
    private String apiKey;

    public User(String username, String password) {
        this.password = password;
        String token = System.getenv("API_TOKEN");
    }

    public boolean login(String password) { return check(password); }
}
