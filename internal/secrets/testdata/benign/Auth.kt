data class Credentials(val username: String, val password: String, val token: String?)

fun login(password: String): Boolean {
    val apiKey: String = System.getenv("API_KEY") ?: ""
    return check(password, apiKey)
}
