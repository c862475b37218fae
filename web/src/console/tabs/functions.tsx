import { TabHeader } from '../ui/controls';

export function FunctionsTab() {
  return <TabHeader title="Functions" />;
}
