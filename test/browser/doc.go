// Package browser holds the test of firn's status page in a real browser:
// it builds firn, runs firn serve under load and drives headless Chromium
// (Debian's chromium, which make test installs) with chromedp; cmd/screenshot
// makes docs/status-page.png the same way (make screenshot). It is a
// module of its own so that chromedp stays out of the main go.mod.
package browser
