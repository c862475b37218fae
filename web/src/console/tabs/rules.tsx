import { TabHeader } from '../ui/controls';

export function RulesTab() {
  return <TabHeader title="Rules" />;
}
