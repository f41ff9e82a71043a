"""A stand-in for a web browser, for ``$BROWSER``: open the URL, follow the redirects, exit.

``webbrowser.open(url)`` runs ``$BROWSER`` with the URL; a user would approve the request in
the page, the local authorization server of ``oauth_fakes`` approves at once and redirects to
the client's loopback callback, which this follows like a browser would.  127.0.0.1 only.
"""

from __future__ import annotations

import sys
from urllib.parse import urlsplit

import httpx


def main(url: str) -> None:
    seen = 0
    with httpx.Client(follow_redirects=False, timeout=30) as http:
        while True:
            if urlsplit(url).hostname != "127.0.0.1":
                sys.exit(f"redirect_browser: refusing to visit {url}")
            response = http.get(url)
            seen += 1
            if not response.is_redirect or seen > 5:
                break
            url = str(response.next_request.url) if response.next_request else response.headers["location"]
    sys.exit(0 if response.is_success else f"redirect_browser: {url} answered {response.status_code}")


if __name__ == "__main__":
    main(sys.argv[1])
