package config

import "os"

// Config holds settings read from the environment.
type Config struct {
	Password string `json:"password"`
	APIKey   string `json:"api_key"`
	Token    string `json:"token,omitempty"`
}

// Load reads the settings.
func Load() Config {
	return Config{
		Password: os.Getenv("DB_PASSWORD"),
		APIKey:   os.Getenv("API_KEY"),
		Token:    os.Getenv("TOKEN"),
	}
}

func login(user, password string) error { return check(user, password) }
