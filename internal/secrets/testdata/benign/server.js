const express = require("express");
const app = express();

const secret = process.env.SESSION_SECRET;
const token = await fetchToken();
app.use(session({ secret, resave: false }));

async function fetchToken() {
  const res = await fetch("/api/token", { method: "POST" });
  return (await res.json()).token;
}
module.exports = { app, token };
