# shellcheck shell=bash
# The crates published to the registry, dependencies first: the one list scripts/package.sh
# and scripts/docsrs.sh read (sourced). Every other crate of the workspace has `publish = false`.
# shellcheck disable=SC2034 # used by the scripts that source this file
published=(nrtucode-facts nrtucode nrtucode-carve nrtucode-deflate nrtucode-pack nrtucode-capi nrtucode-cli)
