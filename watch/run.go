package watch

import (
	"context"
	"errors"
	"fmt"
	"sync"

	tea "charm.land/bubbletea/v2"
)

// Run shows the panel on opts.Out, reading keys from opts.In, until q,
// Ctrl-C or the end of ctx.
func Run(ctx context.Context, opts Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &conn{opts: opts}
	p := tea.NewProgram(NewModel(opts.Folder, c.send, false), tea.WithContext(ctx), tea.WithInput(opts.In), tea.WithOutput(opts.Out))
	c.tell = func(msg any) { p.Send(msg) }
	var wg sync.WaitGroup
	wg.Go(func() { c.serve(ctx) })
	_, err := p.Run()
	cancel()
	wg.Wait()
	if errors.Is(err, tea.ErrInterrupted) || ctx.Err() != nil && errors.Is(err, tea.ErrProgramKilled) {
		return nil
	}
	return err
}

// Once writes the panel once to opts.Out, as read now, width columns wide,
// every line and no styles: for a pipe, a file or a script (`agentd watch
// --once`).
func Once(ctx context.Context, opts Options, width int) error {
	s, err := open(ctx, opts, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	snap, err := readSnapshot(ctx, s)
	if err != nil {
		return err
	}
	m := NewModel(opts.Folder, nil, true)
	m.width, m.height, m.snap, m.link = width, 0, &snap, live
	_, err = fmt.Fprintln(opts.Out, m.Render())
	return err
}
