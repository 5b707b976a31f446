using System;

public record Credentials(string Username, string Password);

public class Program
{
    public string Password { get; set; }
    public static void Main()
    {
        var token = Environment.GetEnvironmentVariable("API_TOKEN");
        var secret = await client.GetSecretAsync("db");
    }
}
