#!/bin/sh
# $BROWSER for `toolbridge auth login`: walks oidc-provider's login and
# consent pages as a user would (each form posts back to its own page),
# then follows the redirect to toolbridge's loopback callback.
jar=$(mktemp)
login=$(curl -s -c "$jar" -b "$jar" -L -o /dev/null -w '%{url_effective}' "$1")
consent=$(curl -s -c "$jar" -b "$jar" -L -o /dev/null -w '%{url_effective}' \
  -d prompt=login -d login=alice -d password=any "$login")
curl -s -c "$jar" -b "$jar" -L -o /dev/null -d prompt=consent "$consent"
rm -f "$jar"
