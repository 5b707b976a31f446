package secrets

import "github.com/agent-interop/runtime/internal/lazy"

// documentedExamples are credentials that vendors publish in their
// documentation as examples. They grant nothing (AWS's are not valid keys;
// Stripe's are the test-mode keys of Stripe's public demo account printed in
// its API reference), they appear verbatim in countless READMEs, tests and
// tutorials, and hiding them changes ordinary code an agent reads. They are
// left alone only when the whole secret is exactly one of these values; any
// other key of the same shape (another sk_test_ key, another AKIA id) is
// still redacted.
var documentedExamples = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		// https://docs.aws.amazon.com/IAM/latest/UserGuide/security-creds.html
		"AKIAIOSFODNN7EXAMPLE":                     "AWS documentation: example access key ID",
		"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY": "AWS documentation: example secret access key",
		"AKIAI44QH8DHBEXAMPLE":                     "AWS documentation: second example access key ID",
		"je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY": "AWS documentation: second example secret access key",
		// https://docs.stripe.com/api/authentication (the demo account's keys)
		"sk_test_4eC39HqLyjWDarjtT1zdp7dc": "Stripe API reference: documented test-mode secret key",
		"pk_test_TYooMQauvdEDq54NiTphI7jx": "Stripe API reference: documented test-mode publishable key",
	}
}}

// DocumentedExamples returns the documented example credentials the
// redactor leaves alone, each with where it is published (a copy).
func DocumentedExamples() map[string]string {
	out := make(map[string]string, len(documentedExamples.Get()))
	for k, v := range documentedExamples.Get() {
		out[k] = v
	}
	return out
}
