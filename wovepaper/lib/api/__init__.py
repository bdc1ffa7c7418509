"""What every API view shares, one module a concern: errors, schema helpers, throttles,
pagination, conditional GET, redirects and URL converters.

The public API is read-only JSON under /api/v1/. Errors always have the body
`{"error": {"status": 404, "code": "not_found", "message": "..."}}` (plus `fields` for invalid
parameters and `retry_after` for 429), whichever view or layer raised them.
"""
