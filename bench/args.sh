# Argument checks the bench/ scripts share: a bad value is refused at once,
# naming its flag, before a build that takes minutes. Sourced, not run.

# count FLAG VALUE: a whole number of 1 or more.
count() {
  [[ $2 =~ ^[1-9][0-9]*$ ]] || { echo "$0: $1: '$2' is not a whole number of 1 or more" >&2; exit 2; }
}

# shares FLAG LIST: comma-separated shares of a space, each in (0, 1].
shares() {
  local s
  IFS=, read -ra s <<<"$2"
  ((${#s[@]})) || { echo "$0: $1: no share given; expected e.g. 0.01,0.02" >&2; exit 2; }
  for x in "${s[@]}"; do
    [[ $x =~ ^(0?\.[0-9]+|1(\.0*)?)$ && ! $x =~ ^0?\.0*$ ]] ||
      { echo "$0: $1: '$x' is not a share of the space in (0, 1], e.g. 0.02" >&2; exit 2; }
  done
}
