constexpr int BM = 64;       // tunable
int BN = 64;                 // tunable
using Tile = Shape<64, 64>;  // tunable: TILE
/* // tunable */ int Z = 3;
