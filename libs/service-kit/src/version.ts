import pkg from '../../../package.json';

/** Semantic version of the platform: one number for every service of a release, from the root package.json. */
export const PLATFORM_VERSION: string = pkg.version;
