package desktop

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// sseFrame is one parsed server-sent event.
type sseFrame struct {
	Event string
	Data  string
}

// readSSE reads server-sent events from r until it ends. Every read counts
// as activity (so `: ping` comments keep the stream fresh). A frame whose
// data exceeds maxFrame characters is dropped whole without buffering it;
// the stream continues with the next frame.
func readSSE(r io.Reader, maxFrame int, activity func(), onFrame func(sseFrame)) error {
	br := bufio.NewReaderSize(r, 64*1024)
	var (
		event    string
		data     bytes.Buffer
		hasData  bool
		dropping bool
		line     []byte
	)
	reset := func() {
		event, hasData, dropping = "", false, false
		data.Reset()
	}
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 && activity != nil {
			activity()
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: keep at most what the frame limit allows.
			if !dropping && len(line)+data.Len()+len(chunk) <= maxFrame {
				line = append(line, chunk...)
			} else {
				dropping, line = true, line[:0]
			}
			continue
		}
		if err != nil && len(chunk) == 0 {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if !dropping {
			line = append(line, chunk...)
		}
		full := bytes.TrimRight(line, "\r\n")
		line = line[:0]
		switch {
		case len(full) == 0 && !dropping && len(chunk) > 0 && (len(bytes.TrimRight(chunk, "\r\n")) == 0):
			if hasData {
				onFrame(sseFrame{Event: event, Data: data.String()})
			}
			reset()
		case len(bytes.TrimRight(chunk, "\r\n")) == 0 && dropping:
			reset() // end of a dropped frame
		case dropping:
			// discard the rest of an oversized frame
		case full[0] == ':':
			// comment / keep-alive
		default:
			field, value, _ := bytes.Cut(full, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "data":
				if data.Len()+len(value)+1 > maxFrame {
					dropping = true
					data.Reset()
					continue
				}
				if hasData {
					data.WriteByte('\n')
				}
				data.Write(value)
				hasData = true
			case "event":
				event = string(value[:min(len(value), 200)])
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
