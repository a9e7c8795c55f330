export { testPostgresUrl, testNatsUrl, createTestDatabase, MissingServiceError } from './services';
export { eventually } from './eventually';
