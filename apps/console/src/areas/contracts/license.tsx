import { saveBlob } from '../../api/client';
import { when } from '../../ui';
import type { License } from './api';

/**
 * An issued license as a file. The API answers the certificate as base64 DER (docs/licensing.md); the file is
 * its PEM form, which the product, `/register` and the command-line verifier all read and people recognise.
 */

export function licensePem(license: License): string {
  const lines = license.license.replace(/\s+/g, '').match(/.{1,64}/g) ?? [];
  return ['-----BEGIN CERTIFICATE-----', ...lines, '-----END CERTIFICATE-----', ''].join('\n');
}

/** A file name from the cluster's name (only characters safe in every file system). */
export function licenseFileName(clusterName: string, contractId: number): string {
  const safe = clusterName.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'cluster';
  return `${safe}-contract-${contractId}-license.pem`;
}

export function saveLicense(license: License, clusterName: string): string {
  const name = licenseFileName(clusterName, license.contract.id);
  saveBlob(new Blob([licensePem(license)], { type: 'application/x-pem-file' }), name);
  return name;
}

/** Until when an issued license is valid: its NotAfter is the contract's end. */
export function licenseValidity(license: License): string {
  return `valid until ${when(license.contract.expiryTimestamp)}`;
}
