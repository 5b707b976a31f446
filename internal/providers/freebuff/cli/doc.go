// Package cli drives the freebuff terminal UI: [Backend] starts it in a
// managed pseudo-terminal (github.com/creack/pty) in its own process group,
// pastes prompts with bracketed paste, stops a turn with Esc, resumes an
// exact conversation with --continue <id>, and reads history from
// ~/.config/manicode/projects/<basename>/chats/<id>/.
package cli
