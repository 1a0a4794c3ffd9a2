package hook

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
)

// maxLine bounds one transcript line; a longer one is skipped.
const maxLine = 16 << 20

// readNew calls line with each complete line (without its newline) of the
// transcript at path written since the cursor's offset, and moves the offset
// past them: an event reads only what is new since the last one. A path
// other than the cursor's, a file shorter than the offset (rewritten), or a
// negative offset (a damaged cursor file), is read from its start. No path, or no file yet, reads nothing.
func readNew(path string, c *cursor, line func([]byte)) error {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if c.Transcript != path || fi.Size() < c.Offset || c.Offset < 0 {
		c.Transcript, c.Offset = path, 0
	}
	if _, err := f.Seek(c.Offset, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(f, 64<<10)
	var partial []byte
	skipping := false // the line is over maxLine: read past it, unparsed
	for {
		chunk, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if skipping || len(partial)+len(chunk) > maxLine {
				c.Offset += int64(len(partial) + len(chunk))
				skipping, partial = true, nil
			} else {
				partial = append(partial, chunk...)
			}
			continue
		}
		if err != nil {
			break // io.EOF: a line still being written waits for the next event
		}
		if skipping {
			skipping = false
			c.Offset += int64(len(chunk))
			continue
		}
		whole := chunk
		if len(partial) > 0 {
			whole = append(partial, chunk...)
			partial = nil
		}
		c.Offset += int64(len(whole))
		if t := bytes.TrimSpace(whole); len(t) > 0 {
			line(t)
		}
	}
	return nil
}

// countMessage counts a model answer read from a transcript, message id
// with n output tokens, into the cursor's unclaimed tokens: once per id,
// at the largest n its lines carry (an agent may write a message in
// several lines, or again when it changes). A new id is one more answer.
func countMessage(c *cursor, id string, n int64) {
	i := slices.IndexFunc(c.Messages, func(m counted) bool { return m.ID == id })
	if i < 0 {
		c.UnclaimedResponses++
		c.Unclaimed += n
		c.Messages = append(c.Messages, counted{id, n})
		if len(c.Messages) > maxMessages {
			c.Messages = slices.Clone(c.Messages[len(c.Messages)-maxMessages:])
		}
		return
	}
	if n > c.Messages[i].Tokens {
		c.Unclaimed += n - c.Messages[i].Tokens
		c.Messages[i].Tokens = n
	}
}

// claim takes the tokens and answers read into the cursor and not yet
// given to a step.
func claim(c *cursor) (tokens int64, responses int) {
	tokens, responses = c.Unclaimed, c.UnclaimedResponses
	c.Unclaimed, c.UnclaimedResponses = 0, 0
	return tokens, responses
}
