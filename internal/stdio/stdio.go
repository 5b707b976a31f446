// Package stdio is the server's stdio transport: newline-delimited
// JSON-RPC with a guard in front of the MCP SDK. A malformed line (not JSON,
// not a JSON-RPC message, a batch, or too long) is answered with the
// protocol's standard error (-32700 or -32600) and skipped; the session
// goes on. The SDK alone would end the session on such a line.
package stdio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLineBytes bounds one inbound message.
const MaxLineBytes = 4 << 20

// Transport returns an MCP transport over in and out that answers
// malformed lines itself.
func Transport(in io.Reader, out io.Writer) mcp.Transport {
	w := &lineWriter{out: out}
	pr, pw := io.Pipe()
	go pump(in, pw, w)
	return &mcp.IOTransport{Reader: pr, Writer: w, MaxLineLength: MaxLineBytes + 1}
}

// lineWriter writes whole lines atomically, so error answers written by the
// pump never interleave with the SDK's messages.
type lineWriter struct {
	mu  sync.Mutex
	out io.Writer
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		if _, err := w.out.Write(w.buf[:i+1]); err != nil {
			return 0, err
		}
		w.buf = w.buf[i+1:]
	}
}

func (w *lineWriter) Close() error { return nil }

func (w *lineWriter) writeLine(b []byte) {
	_, _ = w.Write(append(b, '\n'))
}

// pump copies valid messages from in to pw and answers the others.
func pump(in io.Reader, pw *io.PipeWriter, w *lineWriter) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			if tooLong {
				w.writeLine(errorAnswer(nil, -32600, "Invalid Request: message exceeds 4 MiB"))
			} else if answer := check(line); answer != nil {
				w.writeLine(answer)
			} else if _, werr := pw.Write(append(line, '\n')); werr != nil {
				return
			}
		}
		if err != nil {
			_ = pw.CloseWithError(err)
			return
		}
	}
}

// readLine returns the next line without its newline; a line over the
// limit is consumed and reported as tooLong.
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > MaxLineBytes {
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

// check returns the error answer for a malformed line, or nil.
func check(line []byte) []byte {
	trimmed := bytes.TrimSpace(line)
	if !json.Valid(trimmed) {
		return errorAnswer(nil, -32700, "Parse error")
	}
	if trimmed[0] == '[' {
		return errorAnswer(nil, -32600, "Invalid Request: batches are not supported")
	}
	var msg struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &msg) != nil {
		return errorAnswer(nil, -32600, "Invalid Request: not a JSON-RPC object")
	}
	id := msg.ID
	if len(id) > 0 && id[0] != '"' && (id[0] < '0' || id[0] > '9') && id[0] != '-' && !bytes.Equal(id, []byte("null")) {
		return errorAnswer(nil, -32600, "Invalid Request: id must be a string or a number")
	}
	switch {
	case msg.JSONRPC == nil || *msg.JSONRPC != "2.0":
		return errorAnswer(id, -32600, `Invalid Request: jsonrpc must be "2.0"`)
	case msg.Method == nil && msg.Result == nil && msg.Error == nil:
		return errorAnswer(id, -32600, "Invalid Request: no method")
	case msg.Method != nil && *msg.Method == "":
		return errorAnswer(id, -32600, "Invalid Request: empty method")
	}
	return nil
}

func errorAnswer(id json.RawMessage, code int, msg string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return b
}
