package main

import (
	"context"
	"os"
	"time"

	"github.com/chromedp/chromedp"
)

func main() {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath("/usr/bin/chromium"), chromedp.NoSandbox, chromedp.WindowSize(1280, 800))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	var buf []byte
	js := os.Args[3]
	if err := chromedp.Run(ctx, chromedp.Navigate(os.Args[1]),
		chromedp.WaitVisible(`body[data-state="ready"]`),
		chromedp.Evaluate(js, nil),
		chromedp.Sleep(3*time.Second),
		chromedp.WaitVisible(`body[data-state="ready"]`),
		chromedp.CaptureScreenshot(&buf)); err != nil {
		panic(err)
	}
	os.WriteFile(os.Args[2], buf, 0o644)
}
