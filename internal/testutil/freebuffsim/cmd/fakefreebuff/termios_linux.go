package main

import "golang.org/x/sys/unix"

// The termios ioctls: Linux names them TCGETS/TCSETS.
const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)
