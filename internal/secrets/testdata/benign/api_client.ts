// A typed API client: annotations and awaited calls.
import { api } from "./api";

export interface Credentials {
  username: string;
  password: string;
  apiKey?: string;
  token: string | null;
}

export async function login(creds: Credentials): Promise<string> {
  const token = await api.post("/login", creds);
  const secret = await api.get<string>("/secret");
  return token + secret;
}

const apiKey = process.env.API_KEY;
const password = process.env.DB_PASSWORD ?? "";
export const config = { apiKey, password };
