/**
 * The contracts area: an organization's contracts for its members (`/orgs/:org/contracts/*`) and every
 * contract for site admins (`/admin/contracts/*`). Both share the contract screens, over the API side each uses.
 */
export { OrgContracts } from './org-contracts';
export { AdminContracts } from './admin-contracts';
