// Package docs holds no code: it is firn's documentation, and its tests
// check what of it a program reads — the Prometheus alerts of alerts.yml,
// with promtool, against a real Prometheus scraping a real firn serve.
package docs
