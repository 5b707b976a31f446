struct Credentials {
    let username: String
    let password: String
    var token: String?
}

func login(password: String) async throws -> String {
    let token = try await api.post("/login", body: password)
    return token
}
