// The keeper's hidden command name, apart from keeper.ts so the entry point can
// recognise it without loading the keeper.
export const KEEPER_COMMAND = "__keeper";
