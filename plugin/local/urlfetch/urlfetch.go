package urlfetch

import (
	"fmt"
	"io"
	"net/http"
	"time"
)

// MaxSize is the most Get reads of one URL.
const MaxSize = 64 << 20

// Get reads url whole: an answer other than 200 OK is an error that names
// the URL and the status, and so is one longer than MaxSize.
func Get(url string) ([]byte, error) {
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read %s: %s", url, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", url, err)
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("read %s: longer than %d MiB", url, MaxSize>>20)
	}
	return data, nil
}
