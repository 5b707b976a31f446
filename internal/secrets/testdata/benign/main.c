#include <stdio.h>
#include <string.h>

int check_password(const char *password, size_t len);

int main(int argc, char **argv) {
    char password[64];
    const char *token = getenv("API_TOKEN");
    return check_password(password, strlen(password));
}
