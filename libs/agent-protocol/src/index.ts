// The agent protocol member clusters speak on the bus (docs/agent-protocol.md): subjects, sealed and
// verified envelopes, message-id deduplication and the resource-history request/reply.
export * from './subjects';
export * from './envelope';
export { newUserKeys, signerOf, verifySignature, rawUserPublicKey, type Signer } from './ed25519';
export * from './seen-ids';
export * from './resource-history';
export * from './accounts';
export * from './desired-state';
