import { TabHeader } from '../ui/controls';

export function StorageTab() {
  return <TabHeader title="Storage" />;
}
