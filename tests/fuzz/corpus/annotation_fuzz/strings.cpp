#define V 1  // tunable: ["a", "b"]
int x = V;
