import { describeMigrationRoundTrips } from '@platform/service-testing';
import { migrations } from '../migrations';

describeMigrationRoundTrips('contracts', migrations);
