#!/usr/bin/env bash
# DEV ONLY. The TLS certificate of the compose profile `oauth`'s Keycloak: a throwaway CA and a
# server certificate for the names the gateway and your machine use (keycloak, localhost,
# 127.0.0.1). The gateway refuses a plain-http issuer off loopback (ADR 0004), so Keycloak on the
# compose network serves HTTPS and the gateway trusts this CA through NODE_EXTRA_CA_CERTS.
#
#   infra/keycloak/dev-cert.sh [DIR]      # default infra/keycloak/certs (gitignored)
#
# Writes DIR/ca.pem (trust this), DIR/keycloak.pem and DIR/keycloak-key.pem. The key is made
# readable by all: Keycloak runs as uid 1000 in its container. Never use these beyond your machine.
set -euo pipefail
dir="${1:-$(dirname "$0")/certs}"
mkdir -p "$dir"
cd "$dir"

openssl req -x509 -newkey rsa:2048 -nodes -days 825 -sha256 \
  -subj '/CN=mcp-tasks dev CA (DEMO, NOT TRUSTED ANYWHERE ELSE)' \
  -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign' \
  -keyout ca-key.pem -out ca.pem 2>/dev/null

openssl req -newkey rsa:2048 -nodes -subj '/CN=keycloak' \
  -keyout keycloak-key.pem -out keycloak.csr 2>/dev/null
printf '%s\n' \
  'basicConstraints=CA:FALSE' \
  'keyUsage=critical,digitalSignature,keyEncipherment' \
  'extendedKeyUsage=serverAuth' \
  'subjectAltName=DNS:keycloak,DNS:localhost,IP:127.0.0.1' >keycloak.ext
openssl x509 -req -in keycloak.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 825 \
  -sha256 -extfile keycloak.ext -out keycloak.pem 2>/dev/null

rm -f keycloak.csr keycloak.ext ca.srl
chmod 644 keycloak-key.pem
echo "wrote $PWD/{ca.pem,keycloak.pem,keycloak-key.pem}"
