/**
 * Where `npm start` (`paysvc dev`) serves its embedded chain and facilitator, on 127.0.0.1, unless told to use other
 * ports: the launcher's defaults, and where `paysvc ledger reconcile` looks when neither CHAIN_RPC_URL nor
 * FACILITATOR_URL is set.
 */
export const EMBEDDED_CHAIN_PORT = 8545;
export const EMBEDDED_FACILITATOR_PORT = 4020;

export const EMBEDDED_CHAIN_URL = `http://127.0.0.1:${EMBEDDED_CHAIN_PORT}`;
export const EMBEDDED_FACILITATOR_URL = `http://127.0.0.1:${EMBEDDED_FACILITATOR_PORT}`;
