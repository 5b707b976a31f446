variable "db_password" {
  type      = string
  sensitive = true
}

resource "aws_db_instance" "main" {
  username = "app"
  password = var.db_password
}

data "aws_secretsmanager_secret_version" "token" {
  secret_id = aws_secretsmanager_secret.token.id
}
