package conversations

// WithRetention lowers how many messages a conversation keeps (default
// MaxMessagesPerConversation), so a test shows trimming with a few dozen
// sends instead of 500 (each a write transaction under -race).
func WithRetention(n int) Option { return func(s *Service) { s.retain = n } }

// Retention is how many messages s keeps.
func Retention(s *Service) int { return s.retain }
