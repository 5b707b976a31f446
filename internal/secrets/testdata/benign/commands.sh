#!/bin/sh
# Everyday command lines: flags that name a secret without holding one.
kubectl --token "$KUBE_TOKEN" get pods
gh auth login --with-token < token.txt
vault login -method=github token="$GITHUB_TOKEN"
docker login --password-stdin --username ci < /run/secrets/registry
mysql --password="$MYSQL_PWD" -u app appdb
curl --user "$USER:$PASSWORD" https://example.com/upload
terraform apply -var "api_key=${API_KEY}"
algolia search products --query "red shoes" --hits-per-page 20
twilio api:core:messages:list --limit 20
fastly service list --page 2
openssl rand -hex 16
git log --grep 'twilio' --oneline 9b591f8c642bc3a8f0ee3f1c2b0d4e5a6b7c8d9e
echo "--token <your-token> sets the token"
mysql -h db -u root -p appdb
mysqldump -u app -p --single-transaction appdb > dump.sql
docker login -u ci --password-stdin registry.example.com < token.txt
ssh -p 2222 -u deploy host
curl -u "$CI_USER:$CI_PASSWORD" https://example.com
docker run -p 8080:80 -u 1000:1000 nginx
ps -u root -p 1
