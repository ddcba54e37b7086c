package live

import "net/url"

// CheckTarget parses one target URL as Load does and refuses it unless it
// is http(s) on this machine or allowRemote: `ratelim probe` holds its URL
// to the rule `ratelim load` holds its targets to, through the same check.
// Its error is an *OptionError for "Targets".
func CheckTarget(raw string, allowRemote bool) (*url.URL, error) {
	u, err := checkTargets([]string{raw}, allowRemote)
	if err != nil {
		return nil, err
	}
	return u[0], nil
}
