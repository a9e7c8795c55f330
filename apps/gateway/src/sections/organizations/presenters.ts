import { z } from 'zod';
import { userAsSeenBy, type orgsTeamsV1, type orgTokensV1, type UserViewer } from '@platform/proto';

/** The spec's Profile of a user. */
export const ProfileJson = z
  .object({
    name: z.string(),
    full_name: z.string(),
    email: z.string().meta({ description: 'The e-mail address. Filled for the user itself and site admins only; anyone else gets `""`' }),
    keep_email_private: z
      .boolean()
      .meta({ description: "The user's setting. Filled for the user itself and site admins only; anyone else gets `false`" }),
    website: z.string(),
    location: z.string(),
    language: z
      .string()
      .meta({ description: 'The language the user chose. Filled for the user itself and site admins only; anyone else gets `""`' }),
    description: z.string(),
  })
  .meta({ id: 'Profile' });

/** A user's profile as the viewer may see it: by the rule of every user presented (userAsSeenBy). */
export function profileJson(user: orgsTeamsV1.User, viewer: UserViewer | undefined): z.input<typeof ProfileJson> {
  const u = userAsSeenBy(user, viewer);
  return {
    name: u.login,
    full_name: u.fullName,
    email: u.email,
    keep_email_private: u.hideEmail,
    website: u.website,
    location: u.location,
    language: u.language,
    description: u.description,
  };
}

/** `{message}` answers of the token routes. */
export const MessageJson = z.object({ message: z.string() }).meta({ id: 'Message' });

/** ManagerApiToken: the sync token; the secret is shown on the first read only. */
export const ManagerApiTokenJson = z
  .object({ userID: z.number().int(), orgID: z.number().int(), orgName: z.string(), accessKeyID: z.string(), secretAccessKey: z.string() })
  .meta({ id: 'ManagerApiToken' });

export const managerApiToken = (t: orgTokensV1.ManagerApiToken): z.input<typeof ManagerApiTokenJson> => ({
  userID: t.userId,
  orgID: t.orgId,
  orgName: t.orgName,
  accessKeyID: t.accessKeyId,
  secretAccessKey: t.secretAccessKey,
});

/** AccessTokenInfo of the organization's system admin; `token` is never sent. */
export const AccessTokenInfoJson = z
  .object({
    id: z.number().int(),
    uid: z.number().int(),
    name: z.string(),
    token: z.string(),
    tokenLastEight: z.string(),
    createdAt: z.number().int(),
    updatedAt: z.number().int(),
    hasRecentActivity: z.boolean(),
    hasUsed: z.boolean(),
    expDate: z.number().int(),
  })
  .meta({ id: 'AccessTokenInfo' });

export const accessTokenInfo = (t: orgTokensV1.AccessTokenInfo): z.input<typeof AccessTokenInfoJson> => ({
  id: t.id,
  uid: t.uid,
  name: t.name,
  token: '',
  tokenLastEight: t.tokenLastEight,
  createdAt: t.createdAt,
  updatedAt: t.updatedAt,
  hasRecentActivity: t.hasRecentActivity,
  hasUsed: t.hasUsed,
  expDate: t.expDate,
});

/** A message-bus user account (the spec's BusAccount); only the public key is kept. */
export const BusAccountJson = z
  .object({
    id: z.number().int(),
    uid: z.number().int(),
    accountType: z.string(),
    busPubKey: z.string(),
    clusterID: z.string(),
    productName: z.string(),
    revoked: z.boolean(),
  })
  .meta({ id: 'BusAccount' });

export const busAccount = (a: orgTokensV1.BusAccount): z.input<typeof BusAccountJson> => ({
  id: a.id,
  uid: a.uid,
  accountType: a.accountType,
  busPubKey: a.busPubKey,
  clusterID: a.clusterId,
  productName: a.productName,
  revoked: a.revoked,
});
