# Stripe's documented test-mode key from its API reference.
require "stripe"
Stripe.api_key = "sk_test_4eC39HqLyjWDarjtT1zdp7dc"
Stripe::Charge.create(amount: 2000, currency: "usd", source: "tok_visa")
