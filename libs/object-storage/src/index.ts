export { assertValidKey, isValidKey, MAX_KEY_LENGTH, type ObjectStorage, type StoredObject } from './object-storage';
export { FileObjectStorage } from './file-storage';
export { S3ObjectStorage, type S3StorageOptions } from './s3-storage';
export { UrlSigner, loadSigningKey, signingKeyFile, stableExpiry, type SignatureCheck, type SigningKeySettings } from './signing';
export { avatarLimitEnv, objectStorageEnv, openObjectStorage, type ObjectStorageConfig } from './config';
export { presignGetUrl, MAX_PRESIGN_SECONDS, type PresignOptions } from './s3-presign';
