"""The browser sign-in driven by Authlib (PyPI), an OpenID Connect client FaceSeal did not write.

Two steps, so the test can approve on the phone in between without this script waiting on a clock:

  authlib_code_flow.py start  ISSUER CLIENT_ID SECRET REDIRECT_URI STATE_FILE
      Authlib builds the authorization URL (PKCE S256, state, nonce); a requests session plays the browser,
      opens the page and keeps its cookie. Prints "LINK <sign-in link>"; saves what `finish` needs.
  authlib_code_flow.py finish STATE_FILE
      The browser follows the page's continue link; Authlib takes the redirect, checks state, redeems the code
      with the verifier (client_secret_basic), and validates the ID token (signature against the JWKS, iss, aud,
      exp, nonce) with authlib.oidc.core.CodeIDToken. Prints "CLAIMS <json>".
"""
import html
import json
import re
import sys
import warnings

warnings.simplefilter("ignore")  # authlib.jose announces its successor; the API used here is current in 1.9

import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebKey, jwt
from authlib.oidc.core import CodeIDToken


def discover(issuer):
    metadata = requests.get(issuer + "/.well-known/openid-configuration", timeout=30).json()
    assert metadata["issuer"] == issuer, metadata["issuer"]
    assert "code" in metadata["response_types_supported"], metadata["response_types_supported"]
    assert "S256" in metadata["code_challenge_methods_supported"]
    return metadata


def start(issuer, client_id, secret, redirect_uri, state_file):
    metadata = discover(issuer)
    client = OAuth2Session(client_id, secret, scope="openid", redirect_uri=redirect_uri,
                           code_challenge_method="S256", token_endpoint_auth_method="client_secret_basic")
    verifier = generate_token(64)
    nonce = generate_token(32)
    url, state = client.create_authorization_url(metadata["authorization_endpoint"], code_verifier=verifier, nonce=nonce)
    browser = requests.Session()
    page = browser.get(url, timeout=30)
    assert page.status_code == 200, page.status_code
    link = html.unescape(re.search(r'id="signin-link" href="([^"]+)"', page.text).group(1))
    continue_path = html.unescape(re.search(r'data-continue-url="([^"]+)"', page.text).group(1))
    with open(state_file, "w") as f:
        json.dump({"issuer": issuer, "client_id": client_id, "secret": secret, "redirect_uri": redirect_uri,
                   "state": state, "verifier": verifier, "nonce": nonce, "continue": issuer + continue_path,
                   "cookies": [[c.name, c.value, c.path] for c in browser.cookies]}, f)
    print("LINK " + link, flush=True)


def finish(state_file):
    with open(state_file) as f:
        saved = json.load(f)
    metadata = discover(saved["issuer"])
    browser = requests.Session()
    for name, value, path in saved["cookies"]:
        browser.cookies.set(name, value, path=path)
    redirect = browser.get(saved["continue"], allow_redirects=False, timeout=30)
    assert redirect.status_code == 303, (redirect.status_code, redirect.text)
    location = redirect.headers["Location"]
    assert location.startswith(saved["redirect_uri"]), location
    client = OAuth2Session(saved["client_id"], saved["secret"], scope="openid", redirect_uri=saved["redirect_uri"],
                           code_challenge_method="S256", token_endpoint_auth_method="client_secret_basic", state=saved["state"])
    token = client.fetch_token(metadata["token_endpoint"], authorization_response=location, code_verifier=saved["verifier"])
    jwks = requests.get(metadata["jwks_uri"], timeout=30).json()
    # RFC 7517 §5: a JWK Set's keys of an unknown "kty" SHOULD be ignored; Authlib raises on the ML-DSA key (AKP)
    # instead, so the keys it does not know are left out here, as an application using it would have to.
    jwks["keys"] = [key for key in jwks["keys"] if key["kty"] in ("RSA", "EC", "OKP")]
    keys = JsonWebKey.import_key_set(jwks)
    claims = jwt.decode(token["id_token"], keys, claims_cls=CodeIDToken,
                        claims_options={"iss": {"essential": True, "value": saved["issuer"]},
                                        "aud": {"essential": True, "values": [saved["client_id"]]}},
                        claims_params={"nonce": saved["nonce"], "client_id": saved["client_id"]})
    claims.validate()
    print("CLAIMS " + json.dumps(dict(claims), sort_keys=True), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "start":
        start(*sys.argv[2:7])
    elif sys.argv[1] == "finish":
        finish(sys.argv[2])
    else:
        sys.exit("usage: authlib_code_flow.py start|finish …")
