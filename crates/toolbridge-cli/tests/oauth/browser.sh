#!/bin/sh
# $BROWSER for `toolbridge auth login`: walks oidc-provider's login and
# consent pages as a user would (each form posts back to its own page),
# then follows the redirect to toolbridge's loopback callback. With
# $OAUTH_DECLINE set, the user presses the login page's "[ Cancel ]"
# instead: the provider sends the browser back with access_denied.
jar=$(mktemp)
login=$(curl -s -c "$jar" -b "$jar" -L -o /dev/null -w '%{url_effective}' "$1")
if [ -n "$OAUTH_DECLINE" ]; then
  curl -s -c "$jar" -b "$jar" -L -o /dev/null "$login/abort"
  rm -f "$jar"
  exit 0
fi
consent=$(curl -s -c "$jar" -b "$jar" -L -o /dev/null -w '%{url_effective}' \
  -d prompt=login -d login=alice -d password=any "$login")
curl -s -c "$jar" -b "$jar" -L -o /dev/null -d prompt=consent "$consent"
rm -f "$jar"
