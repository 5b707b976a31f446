package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
)

// ReadLine returns the next line of r without its "\n" (or "\r\n"). A line
// longer than max bytes is consumed whole and reported as tooLong, with no
// data, so one oversized message never desynchronises the stream. At the
// end of the input the last, unterminated line is returned with the error
// (io.EOF).
func ReadLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, err
	}
}
