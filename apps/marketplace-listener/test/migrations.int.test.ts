import { describeMigrationRoundTrips } from '@platform/service-testing';
import { migrations } from '../migrations';

describeMigrationRoundTrips('marketplace', migrations);
