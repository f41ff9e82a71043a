"""OAuth 2.1 for the HTTP client: provider, flow, callback server, token storage."""
